import { MemoryStore } from '../../src/store/memory/memory.store';
import { describeStoreContract } from './store.contract';

describeStoreContract('memory', async () => new MemoryStore());
